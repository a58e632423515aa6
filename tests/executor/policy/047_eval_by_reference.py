# expect: refused The variable `eval` is not defined
f = eval
f('1')
