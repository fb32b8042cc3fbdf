"""The proxies the overhead benchmark compares: nginx, the LiteLLM proxy and Plumbline."""
