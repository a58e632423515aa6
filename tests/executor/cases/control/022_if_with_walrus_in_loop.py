results = []
for s in ['12', 'ab', '7']:
    if (n := len(s)) > 1:
        results.append((s, n))
results
