def solve():
    for i in range(10):
        if i * i > 20:
            final_answer({'answer': i})
    return None
print('searching')
solve()
'unreached'
