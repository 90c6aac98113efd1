print("herdr-relay")
