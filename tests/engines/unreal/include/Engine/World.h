#pragma once
#include "UnrealStub.h"
