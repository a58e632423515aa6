x = 6 * 7
final_answer(x)
print('never printed')
