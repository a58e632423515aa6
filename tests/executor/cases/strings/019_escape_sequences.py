s = 'tab\there\nnewline \\ backslash \'quote\' \x41 \u00e9 \N{BULLET}'
print(s)
print(len('\n'), len(r'\n'), repr('\0'))
s
