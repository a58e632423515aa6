matrix = [[1, 2, 3], [4, 5, 6]]
flat = [v for row in matrix for v in row]
transposed = [[row[i] for row in matrix] for i in range(3)]
(flat, transposed)
