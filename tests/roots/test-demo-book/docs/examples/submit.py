jobs = [lambda x: x + 1]
print(jobs[0](1))
