print("你好")
