"""GenAI metrics over OTLP/HTTP, aggregated in the recorder process from the rows it writes."""
