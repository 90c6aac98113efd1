import HerdrKit
print("hi")
