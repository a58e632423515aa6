def first_negative(rows):
    for r, row in enumerate(rows):
        for c, v in enumerate(row):
            if v < 0:
                return (r, c)
    return None
print(first_negative([[1, 2], [3, -4]]), first_negative([[1]]))
first_negative([[-1]])
