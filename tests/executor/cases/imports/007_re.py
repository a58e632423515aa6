import re
text = 'Call 555-1234 or 555-9876 today'
print(re.findall(r'\d{3}-\d{4}', text), re.sub(r'\d', '#', 'a1b22'), re.split(r'[,;]\s*', 'a, b;c'))
m = re.search(r'(\d+)-(\d+)', text)
print(m.group(0), m.group(1), m.groups(), m.start(), m.span(2))
pat = re.compile(r'(?P<word>[a-z]+)(?P<num>\d+)', re.I)
print([mm.groupdict() for mm in pat.finditer('ab12 CD3 x')])
print(re.fullmatch(r'\w+', 'abc_1') is not None, re.match(r'b', 'abc'), re.escape('a.b'))
re.sub(r'(\w+) (\w+)', r'\2 \1', 'hello world')
