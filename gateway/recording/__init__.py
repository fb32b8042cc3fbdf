"""Getting call records into the database without slowing calls: queue, batch writer, spool."""
