// UHT generates this header for the component; the stub has nothing to add.
#pragma once
#include "UnrealStub.h"
