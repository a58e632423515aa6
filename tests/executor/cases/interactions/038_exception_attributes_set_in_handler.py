errors = []
for v in ['1', 'x', None]:
    try:
        int(v)
    except (ValueError, TypeError) as e:
        errors.append((type(e).__name__, e.args[0][:20]))
errors
