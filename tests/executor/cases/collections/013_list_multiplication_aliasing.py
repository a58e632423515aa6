grid = [[0] * 2] * 3
grid[0][0] = 1
print(grid)
grid2 = [[0] * 2 for _ in range(3)]
grid2[0][0] = 1
grid2
