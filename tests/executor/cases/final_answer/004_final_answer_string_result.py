print('work')
final_answer('The result is ' + str(sum(range(5))))
