"""The cron tool server: schedule agent runs on the Overseer host."""
