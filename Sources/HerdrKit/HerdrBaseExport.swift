// HerdrKit's API includes HerdrBase's types (ConfigDirectory, StorageError, HerdrSessionName…):
// a program importing HerdrKit gets them without a second import.
@_exported import HerdrBase
