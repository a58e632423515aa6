import math
areas = {r: round(math.pi * r * r, 3) for r in range(1, 5)}
best = max(areas.items(), key=lambda kv: kv[1])
print('computed', len(areas), 'areas')
final_answer(f'largest: r={best[0]} area={best[1]}')
