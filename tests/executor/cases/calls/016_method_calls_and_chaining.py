s = '  Mixed Case  '
print(s.strip().lower().replace(' ', '_').upper())
nums = [5, 3, 8]
nums.sort()
print(nums)
'a,b'.split(',')[1].upper()
