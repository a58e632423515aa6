name = 'x'
s = ('abc' 'def'
     f'-{name}-' 'ghi')
b = b'a' b'b'
(s, b, 'one' "two")
