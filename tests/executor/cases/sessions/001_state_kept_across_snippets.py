x = 10
def double(v):
    return v * 2
print('defined')
# ---
y = double(x)
print('y is', y)
y
# ---
x += 1
(x, y, double(x))
