nums = [4, -2, 9, 0, 3]
print(min(nums), max(nums), sum(nums), sum(nums, 100), min('hello'), max([], default=None))
print(max(nums, key=abs), min(3, 1, 2), sum([0.1] * 10))
max('apple', 'banana', key=len)
