# expect: error SyntaxError
nonlocal x
