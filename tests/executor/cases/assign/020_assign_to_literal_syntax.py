# expect: error SyntaxError
x = 1
1 = x
