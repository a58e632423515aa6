vals = [0.0, -0.0, 1.5, 1e-7, 123456789.123, float('inf'), 2 / 3]
print([str(v) for v in vals])
print([f'{v:.3g}' for v in vals])
print(['%.2e' % v for v in vals[:5]])
[round(v, 2) for v in vals if v == v and abs(v) != float('inf')]
