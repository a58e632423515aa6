# expect: error SyntaxError
print('hi'
