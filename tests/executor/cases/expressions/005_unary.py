x = 5
print(-x, +x, ~x, not x, not 0, -(-x), ~~x)
print(-0.0, +-3, not [], not [0])
-x
