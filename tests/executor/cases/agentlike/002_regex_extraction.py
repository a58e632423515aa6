import re
log = """2024-01-02 10:00:01 ERROR disk full on /dev/sda1
2024-01-02 10:05:13 INFO backup started
2024-01-02 10:07:44 ERROR timeout talking to db-2
2024-01-03 08:00:00 WARN high load 3.5"""
pat = re.compile(r'^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}) (\w+) (.*)$', re.M)
entries = [m.groups() for m in pat.finditer(log)]
errors = [(d, msg) for d, t, lvl, msg in entries if lvl == 'ERROR']
levels = {}
for e in entries:
    levels[e[2]] = levels.get(e[2], 0) + 1
print(len(entries), errors)
sorted(levels.items())
