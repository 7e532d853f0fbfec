"""lmdk_gui: landmark privacy for personal time series (Katsomallos, Tzompanaki, Kotzinos, CODASPY 2022)."""

__version__ = "0.1.0"
