out = []
for v in ['1', 'x', '3', 'stop', '5']:
    try:
        if v == 'stop':
            break
        out.append(int(v))
    except ValueError:
        out.append(None)
        continue
    finally:
        out.append('|')
out
