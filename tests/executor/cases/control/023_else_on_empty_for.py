for x in []:
    print('body')
else:
    print('else ran')
'done'
