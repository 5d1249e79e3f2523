"""What runs student code: a separate worker process per part (worker.py), started and limited by
client.py, fed one staged module (staging.py), talking plain data (protocol.py)."""
