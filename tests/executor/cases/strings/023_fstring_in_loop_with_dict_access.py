rows = [{'name': 'a', 'score': 9.5}, {'name': 'bb', 'score': 10.25}]
for r in rows:
    print(f"{r['name']:<4}{r['score']:>8.2f}")
f"{len(rows)} rows"
