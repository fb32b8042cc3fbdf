"""Usage reporting: hourly and daily rollups of the calls table and the reads that use them."""
