nums = [1, 2, 3, 4, 5]
print(list(map(str, nums)), list(filter(None, [0, 1, '', 'a'])), list(filter(lambda n: n % 2, nums)))
print(list(map(lambda a, b: a * b, nums, nums[1:])), dict(zip('abc', nums)), list(enumerate('xy', 1)))
sum(map(abs, [-1, -2, 3]))
