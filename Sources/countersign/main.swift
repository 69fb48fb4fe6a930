import CountersignProxy
print(ProxyPlaceholder.base() != nil)
