text = """name,dept,salary
ann,eng,120
bob,eng,100
cy,ops,90
dee,ops,95
eve,hr,70"""
rows = [line.split(',') for line in text.strip().splitlines()]
header, body = rows[0], rows[1:]
records = [dict(zip(header, r)) for r in body]
by_dept = {}
for r in records:
    by_dept.setdefault(r['dept'], []).append(int(r['salary']))
summary = {d: {'n': len(v), 'avg': sum(v) / len(v), 'max': max(v)} for d, v in sorted(by_dept.items())}
for d, s in summary.items():
    print(f"{d:<4} n={s['n']} avg={s['avg']:.1f} max={s['max']}")
summary
