try:
    assert 1 + 1 == 3, 'math is broken'
except AssertionError as e:
    print('AssertionError:', e)
assert True
x = 5
assert x > 0
'passed'
