def b(obj):
    late = 2  # a local: not the later part's global of the same name
    return a() + A + late + obj.late
