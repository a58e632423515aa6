import unicodedata
s1 = 'café'
s2 = 'cafe\u0301'
print(s1 == s2, unicodedata.normalize('NFC', s1) == unicodedata.normalize('NFC', s2), len(s2))
print(unicodedata.name('é'), unicodedata.category('A'), unicodedata.numeric('½'))
unicodedata.lookup('SNOWMAN')
