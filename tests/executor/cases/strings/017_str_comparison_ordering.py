words = ['banana', 'Apple', 'cherry', 'apple']
print(sorted(words), sorted(words, key=str.lower), max(words), min(words, key=len))
'abc' < 'abd' < 'b'
