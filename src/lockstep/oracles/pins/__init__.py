"""The pins oracle: whole process runs — argv, env, stdin → exit code, stdout, stderr."""
