rows = [('apple', 1.5, 10), ('banana', 0.25, 120), ('cherry', 12.0, 3)]
header = f"{'fruit':<8}{'price':>8}{'qty':>6}{'total':>10}"
print(header)
print('-' * len(header))
grand = 0
for name, price, qty in rows:
    total = price * qty
    grand += total
    print(f'{name:<8}{price:>8.2f}{qty:>6d}{total:>10.2f}')
print(f"{'':<22}{grand:>10.2f}")
grand
