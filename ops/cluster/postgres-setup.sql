-- The database and role the nodes share (run once as the PostgreSQL superuser:
--   sudo -u postgres psql -f ops/cluster/postgres-setup.sql).
-- Scribe creates its table (scribe_events) on the first start of the first node.
CREATE ROLE scribe LOGIN PASSWORD 'CHANGE-ME';
CREATE DATABASE scribe OWNER scribe;
