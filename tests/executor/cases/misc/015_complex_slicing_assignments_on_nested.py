grid = [[0] * 4 for _ in range(3)]
grid[1][1:3] = [7, 8]
grid[-1][::-1] = [1, 2, 3, 4]
col = [row[2] for row in grid]
(grid, col)
