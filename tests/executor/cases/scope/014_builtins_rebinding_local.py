def f():
    sum = 'mine'
    return sum
(f(), sum([1, 2]))
