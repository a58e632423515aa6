try:
    final_answer('value')
finally:
    print('finally still runs')
