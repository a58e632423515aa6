import statistics
import math
m = [[2, 4, 6], [1, 3, 5], [7, 8, 9]]
row_means = [statistics.mean(r) for r in m]
col_sums = [sum(col) for col in zip(*m)]
det = (m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
       - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
       + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]))
norm = math.sqrt(sum(v * v for r in m for v in r))
print(row_means, col_sums, det)
round(norm, 4)
