"""Several hosts on one Postgres: session runs as DBOS workflows and their placement, the watch over
hosts and the fence of one that lost its lock, and the bridge that brings other hosts' events here.
The life of an approval across hosts is told in docs/architecture.md."""
