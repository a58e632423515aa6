fs = {}
for name in ('a', 'b'):
    fs[name] = lambda name=name: name.upper()
{k: f() for k, f in fs.items()}
